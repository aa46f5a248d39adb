// takeOverConnection() end to end: a real Poco HTTPServer on 127.0.0.1 with a two-thread pool
// hands SSE connections to a StreamReactor; raw client sockets check the bytes on the wire.

#include "http/stream_handoff.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <Poco/Net/HTTPRequestHandler.h>
#include <Poco/Net/HTTPRequestHandlerFactory.h>
#include <Poco/Net/HTTPServer.h>
#include <Poco/Net/HTTPServerParams.h>
#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerRequestImpl.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <Poco/Net/ServerSocket.h>
#include <Poco/Net/SocketAddress.h>
#include <Poco/StreamCopier.h>
#include <Poco/ThreadPool.h>
#include <gtest/gtest.h>

#include "http/sse_event.h"
#include "http/stream_reactor.h"
#include "http_test_support.h"

namespace crank::http::test {
namespace {

/// What the handlers did, for the test to wait on.
class HandlerLog {
public:
    void adopted(StreamId id) {
        {
            std::lock_guard lock(mutex_);
            ids_.push_back(id);
        }
        changed_.notify_all();
    }
    void failed(Error error) {
        {
            std::lock_guard lock(mutex_);
            errors_.push_back(std::move(error));
        }
        changed_.notify_all();
    }
    void body(std::string text) {
        std::lock_guard lock(mutex_);
        bodies_.push_back(std::move(text));
    }
    /// Waits until `count` streams were adopted; returns their ids (maybe fewer on timeout).
    std::vector<StreamId> waitForStreams(std::size_t count) {
        std::unique_lock lock(mutex_);
        changed_.wait_for(lock, kWait, [&] { return ids_.size() >= count; });
        return ids_;
    }
    std::vector<Error> waitForErrors(std::size_t count) {
        std::unique_lock lock(mutex_);
        changed_.wait_for(lock, kWait, [&] { return errors_.size() >= count; });
        return errors_;
    }
    std::vector<std::string> bodies() const {
        std::lock_guard lock(mutex_);
        return bodies_;
    }

private:
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<StreamId> ids_;
    std::vector<Error> errors_;
    std::vector<std::string> bodies_;
};

void setSseHeaders(Poco::Net::HTTPServerResponse& response) {
    response.setStatus(Poco::Net::HTTPResponse::HTTP_OK);
    response.setContentType("text/event-stream");
    response.set("Cache-Control", "no-cache");
    response.set("Mcp-Session-Id", "session-1");
}

class TestHandler final : public Poco::Net::HTTPRequestHandler {
public:
    TestHandler(StreamReactor& reactor, ClosedLog& closed, HandlerLog& log)
        : reactor_(reactor), closed_(closed), log_(log) {}

    void handleRequest(Poco::Net::HTTPServerRequest& request,
                       Poco::Net::HTTPServerResponse& response) override {
        const std::string& path = request.getURI();
        if (path == "/ping") {
            response.setContentType("text/plain");
            response.sendBuffer("pong", 4);
        } else if (path == "/stream") {
            stream(request, response);
        } else if (path == "/naive") {
            naiveStream(request, response);
        } else if (path == "/sent") {
            response.sendBuffer("x", 1);
            Result<int> fd = takeOverConnection(request, response);
            log_.failed(fd.ok() ? Error{ErrorCode::internal, "took over a sent response"}
                                : fd.error());
            if (fd.ok()) {
                ::close(*fd);
            }
        } else {
            response.setStatus(Poco::Net::HTTPResponse::HTTP_NOT_FOUND);
            response.sendBuffer("", 0);
        }
    }

private:
    /// What an MCP endpoint does: read the request, set the head, take over, adopt, prime.
    void stream(Poco::Net::HTTPServerRequest& request, Poco::Net::HTTPServerResponse& response) {
        if (request.getMethod() == "POST") {
            std::string body;
            Poco::StreamCopier::copyToString(request.stream(), body);
            log_.body(std::move(body));
        }
        setSseHeaders(response);
        Result<int> fd = takeOverConnection(request, response);
        if (!fd.ok()) {
            log_.failed(fd.error());
            return;
        }
        Result<StreamId> id = reactor_.adopt(*fd, closed_.callback());
        if (!id.ok()) {
            log_.failed(id.error());
            return;
        }
        reactor_.send(*id, formatSseEvent("p" + std::to_string(*id), "", ""));
        log_.adopted(*id);
    }

    /// The trap takeOverConnection() avoids: dup() without detaching the socket from Poco.
    void naiveStream(Poco::Net::HTTPServerRequest& request,
                     Poco::Net::HTTPServerResponse& response) {
        setSseHeaders(response);
        response.setKeepAlive(false);
        response.send().flush();
        auto& served = dynamic_cast<Poco::Net::HTTPServerRequestImpl&>(request);
        const int fd = ::dup(served.socket().impl()->sockfd());
        Result<StreamId> id = reactor_.adopt(fd, closed_.callback());
        if (id.ok()) {
            log_.adopted(*id);
        }
    }

    StreamReactor& reactor_;
    ClosedLog& closed_;
    HandlerLog& log_;
};

class TestHandlerFactory final : public Poco::Net::HTTPRequestHandlerFactory {
public:
    TestHandlerFactory(StreamReactor& reactor, ClosedLog& closed, HandlerLog& log)
        : reactor_(reactor), closed_(closed), log_(log) {}
    Poco::Net::HTTPRequestHandler* createRequestHandler(
        const Poco::Net::HTTPServerRequest&) override {
        return new TestHandler(reactor_, closed_, log_);
    }

private:
    StreamReactor& reactor_;
    ClosedLog& closed_;
    HandlerLog& log_;
};

/// Poco's HTTPServer with a pool of 2 threads (so 2 connections at a time in Poco's model),
/// plus the reactor that its stream handlers hand connections to.
class SseServer {
public:
    SseServer() : pool_("sse-test", 2, 2) {
        EXPECT_TRUE(reactor_.start().ok());
        Poco::Net::ServerSocket socket;
        socket.bind(Poco::Net::SocketAddress("127.0.0.1", 0), /*reuseAddress=*/true,
                    /*reusePort=*/false);
        socket.listen(1024);
        auto* params = new Poco::Net::HTTPServerParams;  // reference-counted by Poco
        params->setMaxThreads(2);
        params->setMaxQueued(1000);
        params->setKeepAlive(true);
        server_ = std::make_unique<Poco::Net::HTTPServer>(
            new TestHandlerFactory(reactor_, closed_, log_), pool_, socket, params);
        server_->start();
        port_ = socket.address().port();
    }
    ~SseServer() {
        server_->stopAll(true);
        server_.reset();
        pool_.joinAll();
        reactor_.shutdown(std::chrono::milliseconds(0));
    }
    SseServer(const SseServer&) = delete;
    SseServer& operator=(const SseServer&) = delete;

    std::uint16_t port() const { return port_; }
    StreamReactor& reactor() { return reactor_; }
    ClosedLog& closed() { return closed_; }
    HandlerLog& log() { return log_; }
    /// Connections Poco is still serving (its handlers have not all returned).
    int pocoConnections() const { return server_->currentConnections(); }

private:
    ClosedLog closed_;
    StreamReactor reactor_;
    HandlerLog log_;
    Poco::ThreadPool pool_;
    std::unique_ptr<Poco::Net::HTTPServer> server_;
    std::uint16_t port_ = 0;
};

/// A response head split into its status line and headers (names lower-cased).
struct Head {
    std::string statusLine;
    std::multimap<std::string, std::string> headers;

    std::string get(const std::string& name) const {
        const auto it = headers.find(name);
        return it == headers.end() ? std::string() : it->second;
    }
};

Head parseHead(const std::string& text) {
    Head head;
    std::size_t start = 0;
    std::size_t end = text.find("\r\n");
    head.statusLine = text.substr(0, end);
    while (end != std::string::npos && end + 2 < text.size()) {
        start = end + 2;
        end = text.find("\r\n", start);
        const std::string line = text.substr(start, end - start);
        const std::size_t colon = line.find(':');
        if (colon == std::string::npos) {
            continue;
        }
        std::string name = line.substr(0, colon);
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        std::string value = line.substr(colon + 1);
        value.erase(0, value.find_first_not_of(' '));
        head.headers.emplace(name, value);
    }
    return head;
}

/// A raw client of one SSE stream: sends the request, then reads the head and the body.
class StreamClient {
public:
    StreamClient(std::uint16_t port, const std::string& path)
        : fd_(connectLoopback(port)), path_(path) {
        writeAll(fd_.get(), "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                                "\r\nAccept: text/event-stream\r\n\r\n");
    }

    /// Reads the response head; false if it did not arrive.
    bool readHead(Head& head) {
        if (!readUntil(fd_.get(), buffer_, "\r\n\r\n")) {
            return false;
        }
        const std::size_t end = buffer_.find("\r\n\r\n");
        head = parseHead(buffer_.substr(0, end + 2));
        buffer_.erase(0, end + 4);
        return true;
    }
    /// Reads body bytes until `needle` is among them; returns the body so far.
    bool readBodyUntil(std::string_view needle) { return readUntil(fd_.get(), buffer_, needle); }
    const std::string& body() const { return buffer_; }
    int fd() const { return fd_.get(); }
    void close() { fd_.reset(); }

private:
    Fd fd_;
    std::string path_;
    std::string buffer_;
};

void expectSseHead(const Head& head) {
    EXPECT_EQ(head.statusLine, "HTTP/1.1 200 OK");
    EXPECT_EQ(head.get("content-type"), "text/event-stream");
    EXPECT_EQ(head.get("cache-control"), "no-cache");
    std::string connection = head.get("connection");  // Poco writes "Close"; tokens ignore case
    std::transform(connection.begin(), connection.end(), connection.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    EXPECT_EQ(connection, "close");
    EXPECT_EQ(head.get("mcp-session-id"), "session-1");
    EXPECT_EQ(head.headers.count("content-length"), 0U) << "the body is delimited by the close";
    EXPECT_EQ(head.headers.count("transfer-encoding"), 0U);
}

/// Waits until Poco has finished with every connection (all handlers returned).
bool waitPocoIdle(const SseServer& server) {
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    while (server.pocoConnections() > 0) {
        if (std::chrono::steady_clock::now() > deadline) {
            return false;
        }
        std::this_thread::sleep_for(5ms);
    }
    return true;
}

TEST(StreamHandoff, HeadThenEventsFromAnotherThread) {
    SseServer server;
    StreamClient client(server.port(), "/stream");
    Head head;
    ASSERT_TRUE(client.readHead(head));
    expectSseHead(head);

    const std::vector<StreamId> ids = server.log().waitForStreams(1);
    ASSERT_EQ(ids.size(), 1U);
    const StreamId id = ids[0];
    std::string expected = formatSseEvent("p" + std::to_string(id), "", "");
    std::thread sender([&] {
        for (int i = 1; i <= 3; ++i) {
            const std::string e = formatSseEvent(
                std::to_string(i), "message", R"({"jsonrpc":"2.0","n":)" + std::to_string(i) + "}");
            EXPECT_TRUE(server.reactor().send(id, e));
        }
    });
    sender.join();
    for (int i = 1; i <= 3; ++i) {
        expected += formatSseEvent(std::to_string(i), "message",
                                   R"({"jsonrpc":"2.0","n":)" + std::to_string(i) + "}");
    }
    ASSERT_TRUE(client.readBodyUntil(expected));
    EXPECT_EQ(client.body(), expected);
}

TEST(StreamHandoff, PocoSendsNothingAfterTheHandlerReturns) {
    SseServer server;
    StreamClient client(server.port(), "/stream");
    Head head;
    ASSERT_TRUE(client.readHead(head));
    const std::vector<StreamId> ids = server.log().waitForStreams(1);
    ASSERT_EQ(ids.size(), 1U);
    const std::string priming = formatSseEvent("p" + std::to_string(ids[0]), "", "");
    ASSERT_TRUE(client.readBodyUntil(priming));

    // Poco's connection has ended and its descriptor is closed: no FIN, no bytes follow.
    ASSERT_TRUE(waitPocoIdle(server));
    const ReadResult quiet = readFor(client.fd(), 300ms);
    EXPECT_FALSE(quiet.eof) << "Poco ended the connection after the hand-off";
    EXPECT_TRUE(quiet.bytes.empty()) << quiet.bytes;

    // The reactor still owns a live connection.
    const std::string later = formatSseEvent("1", "", "after Poco let go");
    ASSERT_TRUE(server.reactor().send(ids[0], later));
    ASSERT_TRUE(client.readBodyUntil(later));
    EXPECT_EQ(client.body(), priming + later);
    EXPECT_EQ(server.reactor().openStreams(), 1U);

    // And only the reactor ends it.
    server.reactor().close(ids[0]);
    const ReadResult end = readToEof(client.fd());
    EXPECT_TRUE(end.eof);
    EXPECT_TRUE(end.bytes.empty());
    EXPECT_EQ(server.closed().waitFor(ids[0]), CloseReason::closed_by_server);
}

// Why takeOverConnection() detaches the socket: Poco's response stream shuts the sending side
// down when it is destroyed, and that ends the TCP connection for every duplicate. If a Poco
// upgrade stops doing this, this test fails and the detach can be reconsidered.
TEST(StreamHandoff, PocoWouldSendFinWithoutDetach) {
    SseServer server;
    StreamClient client(server.port(), "/naive");
    Head head;
    ASSERT_TRUE(client.readHead(head));
    ASSERT_EQ(server.log().waitForStreams(1).size(), 1U);
    EXPECT_TRUE(readToEof(client.fd()).eof) << "no FIN: Poco no longer shuts the socket down";
}

TEST(StreamHandoff, PostResponseCanStream) {
    SseServer server;
    Fd fd = connectLoopback(server.port());
    const std::string body = R"({"jsonrpc":"2.0","id":1,"method":"tools/call"})";
    writeAll(fd.get(),
             "POST /stream HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
             "application/json\r\nContent-Length: " +
                 std::to_string(body.size()) + "\r\n\r\n" + body);
    std::string buffer;
    ASSERT_TRUE(readUntil(fd.get(), buffer, "\r\n\r\n"));
    expectSseHead(parseHead(buffer.substr(0, buffer.find("\r\n\r\n") + 2)));
    const std::vector<StreamId> ids = server.log().waitForStreams(1);
    ASSERT_EQ(ids.size(), 1U);
    EXPECT_EQ(server.log().bodies(), std::vector<std::string>{body});

    const std::string result = formatSseEvent("1", "message", R"({"jsonrpc":"2.0","id":1})");
    ASSERT_TRUE(server.reactor().send(ids[0], result));
    server.reactor().close(ids[0]);  // the response is sent: end the stream
    const ReadResult rest = readToEof(fd.get());
    EXPECT_TRUE(rest.eof);
    EXPECT_EQ(buffer.substr(buffer.find("\r\n\r\n") + 4) + rest.bytes,
              formatSseEvent("p" + std::to_string(ids[0]), "", "") + result);
}

TEST(StreamHandoff, TakeOverAfterTheResponseWasSentIsRefused) {
    SseServer server;
    Fd fd = connectLoopback(server.port());
    writeAll(fd.get(), "GET /sent HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    const std::vector<Error> errors = server.log().waitForErrors(1);
    ASSERT_EQ(errors.size(), 1U);
    EXPECT_EQ(errors[0].code, ErrorCode::conflict) << errors[0].message;
    const ReadResult reply = readToEof(fd.get());
    EXPECT_EQ(reply.bytes.rfind("HTTP/1.1 200 OK\r\n", 0), 0U) << reply.bytes;
}

TEST(StreamHandoff, ThreeHundredStreamsOnTwoPocoThreads) {
    constexpr std::size_t kStreams = 300;  // + as many descriptors in the reactor; limit 20000
    SseServer server;
    std::vector<std::unique_ptr<StreamClient>> clients;
    clients.reserve(kStreams);
    for (std::size_t i = 0; i < kStreams; ++i) {
        clients.push_back(std::make_unique<StreamClient>(server.port(), "/stream"));
    }
    // Every one is served although Poco has 2 threads: each handler returns at once.
    for (std::size_t i = 0; i < kStreams; ++i) {
        Head head;
        ASSERT_TRUE(clients[i]->readHead(head)) << "client " << i << " got no response head";
        ASSERT_EQ(head.statusLine, "HTTP/1.1 200 OK") << "client " << i;
        ASSERT_TRUE(clients[i]->readBodyUntil("\n\n")) << "client " << i << ": no priming event";
    }
    const std::vector<StreamId> ids = server.log().waitForStreams(kStreams);
    ASSERT_EQ(ids.size(), kStreams);
    EXPECT_EQ(server.reactor().openStreams(), kStreams);
    EXPECT_TRUE(server.log().waitForErrors(0).empty());

    // Plain requests are still answered while all of them are open.
    {
        Fd ping = connectLoopback(server.port());
        writeAll(ping.get(), "GET /ping HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        const ReadResult reply = readToEof(ping.get());
        EXPECT_TRUE(reply.eof);
        EXPECT_EQ(reply.bytes.rfind("HTTP/1.1 200 OK\r\n", 0), 0U) << reply.bytes;
        EXPECT_NE(reply.bytes.find("\r\n\r\npong"), std::string::npos) << reply.bytes;
    }
    EXPECT_EQ(server.reactor().openStreams(), kStreams);

    // One event to every stream; every client gets its own.
    for (const StreamId id : ids) {
        ASSERT_TRUE(server.reactor().send(
            id, formatSseEvent("e" + std::to_string(id), "message", "to " + std::to_string(id))));
    }
    std::set<StreamId> seen;
    for (std::size_t i = 0; i < kStreams; ++i) {
        // Which stream a client holds shows in its priming event, "id: p<stream>".
        const std::string& body = clients[i]->body();
        ASSERT_EQ(body.rfind("id: p", 0), 0U) << "client " << i << ": " << body;
        const StreamId id = std::stoull(body.substr(5, body.find('\n') - 5));
        const std::string priming = formatSseEvent("p" + std::to_string(id), "", "");
        const std::string event =
            formatSseEvent("e" + std::to_string(id), "message", "to " + std::to_string(id));
        ASSERT_TRUE(clients[i]->readBodyUntil(event)) << "client " << i << ": " << body;
        EXPECT_EQ(clients[i]->body(), priming + event) << "client " << i;
        seen.insert(id);
    }
    EXPECT_EQ(seen.size(), kStreams);

    // Clients leaving are noticed on every stream.
    for (auto& c : clients) {
        c->close();
    }
    EXPECT_TRUE(server.closed().waitForCount(kStreams));
    for (const auto& [id, reason] : server.closed().all()) {
        EXPECT_EQ(reason, CloseReason::peer_closed) << "stream " << id;
    }
    EXPECT_EQ(server.reactor().openStreams(), 0U);
}

}  // namespace
}  // namespace crank::http::test
