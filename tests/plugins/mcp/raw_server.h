#pragma once

// A raw HTTP/1.1 server on 127.0.0.1 for the mcp plugin's HTTP transport tests: it records every
// request and answers with exactly the bytes a test gives it (hostile answers included).
// Connections are served one at a time, each closed after its answer (or held open).

#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace crank::mcpc::rawhttp {

using namespace std::chrono_literals;

struct RawRequest {
    std::string method;
    std::string target;
    std::map<std::string, std::string> headers;  // lowercase names
    std::string body;

    std::string header(const std::string& name) const {
        const auto it = headers.find(name);
        return it == headers.end() ? std::string() : it->second;
    }
    /// The JSON-RPC id of the body ("" for none).
    std::string id() const {
        rapidjson::Document doc;
        doc.Parse(body.data(), body.size());
        return doc.IsObject() && doc.HasMember("id") && doc["id"].IsInt64()
                   ? std::to_string(doc["id"].GetInt64())
                   : std::string();
    }
};

struct RawReply {
    std::string bytes;  ///< written as they are
    bool hold = false;  ///< keep the connection open until the server stops
};

inline RawReply reply(int status, const std::string& type, const std::string& body,
                      const std::string& extra_headers = "") {
    return {"HTTP/1.1 " + std::to_string(status) + " Whatever\r\nContent-Type: " + type +
            "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra_headers +
            "Connection: close\r\n\r\n" + body};
}

inline RawReply sse(const std::string& events, bool hold = false) {
    return {
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n" + events,
        hold};
}

inline RawReply answer(const RawRequest& request, const std::string& result = "{}") {
    return reply(200, "application/json",
                 R"({"jsonrpc":"2.0","id":)" + request.id() + R"(,"result":)" + result + "}");
}

/// One listening socket on 127.0.0.1 (an ephemeral port) answering every request with what the
/// handler says, and recording the requests. Connections are served one at a time.
class RawServer {
public:
    using Handler = std::function<RawReply(const RawRequest&)>;

    /// `greeting`: written as soon as a connection is accepted, before any request is read.
    explicit RawServer(Handler handler, std::string greeting = "")
        : handler_(std::move(handler)), greeting_(std::move(greeting)) {
        listen_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        address.sin_port = 0;
        socklen_t size = sizeof address;
        if (::bind(listen_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
            ::listen(listen_, 16) != 0 ||
            ::getsockname(listen_, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
            ADD_FAILURE() << "cannot listen";
        }
        port_ = ntohs(address.sin_port);
        thread_ = std::thread([this] { run(); });
    }
    ~RawServer() {
        stop_ = true;
        thread_.join();
        ::close(listen_);
        for (const int fd : held_) {
            ::close(fd);
        }
    }
    RawServer(const RawServer&) = delete;
    RawServer& operator=(const RawServer&) = delete;

    std::string url(const std::string& path = "/mcp") const {
        return "http://127.0.0.1:" + std::to_string(port_) + path;
    }
    std::uint16_t port() const { return port_; }
    std::vector<RawRequest> requests() {
        const std::lock_guard lock(mutex_);
        return requests_;
    }
    /// Waits until `n` requests arrived (at most `timeout`).
    bool waitForRequests(std::size_t n, std::chrono::milliseconds timeout) {
        const auto until = std::chrono::steady_clock::now() + timeout;
        while (std::chrono::steady_clock::now() < until) {
            if (requests().size() >= n) {
                return true;
            }
            std::this_thread::sleep_for(10ms);
        }
        return false;
    }

private:
    void run() {
        while (!stop_) {
            pollfd p{listen_, POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0) {
                continue;
            }
            const int fd = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
            if (fd < 0) {
                continue;
            }
            if (!greeting_.empty()) {
                (void)!::send(fd, greeting_.data(), greeting_.size(), MSG_NOSIGNAL);
            }
            RawRequest request;
            if (!read(fd, request)) {
                ::close(fd);
                continue;
            }
            {
                const std::lock_guard lock(mutex_);
                requests_.push_back(request);
            }
            const RawReply r = handler_(request);
            std::size_t done = 0;
            while (done < r.bytes.size()) {
                const ssize_t n =
                    ::send(fd, r.bytes.data() + done, r.bytes.size() - done, MSG_NOSIGNAL);
                if (n <= 0) {
                    break;
                }
                done += static_cast<std::size_t>(n);
            }
            if (r.hold) {
                held_.push_back(fd);
            } else {
                ::close(fd);
            }
        }
    }

    static bool read(int fd, RawRequest& request) {
        std::string data;
        const auto until = std::chrono::steady_clock::now() + 2s;
        std::size_t headEnd = std::string::npos;
        std::size_t length = 0;
        while (std::chrono::steady_clock::now() < until) {
            if (headEnd == std::string::npos) {
                headEnd = data.find("\r\n\r\n");
                if (headEnd != std::string::npos) {
                    std::size_t lineStart = data.find("\r\n") + 2;
                    const std::string first = data.substr(0, lineStart - 2);
                    request.method = first.substr(0, first.find(' '));
                    request.target =
                        first.substr(first.find(' ') + 1, first.rfind(' ') - first.find(' ') - 1);
                    while (lineStart < headEnd) {
                        const std::size_t lineEnd = data.find("\r\n", lineStart);
                        const std::string line = data.substr(lineStart, lineEnd - lineStart);
                        std::string name = line.substr(0, line.find(':'));
                        for (char& c : name) {
                            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                        }
                        std::string value = line.substr(line.find(':') + 1);
                        value.erase(0, value.find_first_not_of(' '));
                        request.headers[name] = value;
                        lineStart = lineEnd + 2;
                    }
                    length = request.headers.count("content-length") != 0
                                 ? std::stoul(request.headers["content-length"])
                                 : 0;
                }
            }
            if (headEnd != std::string::npos && data.size() >= headEnd + 4 + length) {
                request.body = data.substr(headEnd + 4, length);
                return true;
            }
            pollfd p{fd, POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0) {
                continue;
            }
            char buffer[4096];
            const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
            if (n <= 0) {
                return false;
            }
            data.append(buffer, static_cast<std::size_t>(n));
        }
        return false;
    }

    Handler handler_;
    std::string greeting_;
    int listen_ = -1;
    std::uint16_t port_ = 0;
    std::thread thread_;
    std::atomic<bool> stop_{false};
    std::mutex mutex_;
    std::vector<RawRequest> requests_;
    std::vector<int> held_;
};

}  // namespace crank::mcpc::rawhttp
