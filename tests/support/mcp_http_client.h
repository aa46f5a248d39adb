#pragma once

// A raw HTTP/1.1 client for the MCP endpoint in tests: one exchange per connection, and an SSE
// reader, both on loopback sockets (Poco::Net), so that any header can be sent or left out.

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <Poco/Net/SocketAddress.h>
#include <Poco/Net/StreamSocket.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

namespace crank::testing {

inline constexpr const char* kAccept = "application/json, text/event-stream";

struct Reply {
    int status = 0;
    std::map<std::string, std::string> headers;  // lower-case names
    std::string body;

    std::string header(const std::string& name) const {
        const auto it = headers.find(name);
        return it == headers.end() ? "" : it->second;
    }
    rapidjson::Document json() const {
        rapidjson::Document doc;
        doc.Parse(body.c_str());
        EXPECT_FALSE(doc.HasParseError()) << body;
        return doc;
    }
};

/// One HTTP/1.1 exchange on a fresh connection (Connection: close), raw so that any header can
/// be sent or left out.
inline Reply exchange(std::uint16_t port, const std::string& method, const std::string& path,
                      const std::vector<std::pair<std::string, std::string>>& headers,
                      const std::string& body = "") {
    Poco::Net::StreamSocket socket(Poco::Net::SocketAddress("127.0.0.1", port));
    socket.setReceiveTimeout(Poco::Timespan(20, 0));
    std::string request = method + " " + path + " HTTP/1.1\r\n";
    bool hasHost = false;
    for (const auto& [name, value] : headers) {
        request += name + ": " + value + "\r\n";
        hasHost = hasHost || name == "Host";
    }
    if (!hasHost) {
        request += "Host: 127.0.0.1:" + std::to_string(port) + "\r\n";
    }
    request += "Connection: close\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n";
    request += body;
    socket.sendBytes(request.data(), static_cast<int>(request.size()));
    std::string data;
    char buffer[4096];
    int n = 0;
    while ((n = socket.receiveBytes(buffer, sizeof buffer)) > 0) {
        data.append(buffer, static_cast<std::size_t>(n));
    }
    Reply reply;
    const auto headEnd = data.find("\r\n\r\n");
    if (headEnd == std::string::npos) {
        ADD_FAILURE() << "no response head: " << data;
        return reply;
    }
    std::istringstream head(data.substr(0, headEnd));
    std::string line;
    std::getline(head, line);
    reply.status = std::stoi(line.substr(9, 3));
    while (std::getline(head, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) {
            continue;
        }
        std::string name = line.substr(0, colon);
        for (char& c : name) {
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        std::string value = line.substr(colon + 1);
        while (!value.empty() && (value.front() == ' ')) {
            value.erase(0, 1);
        }
        while (!value.empty() && (value.back() == '\r' || value.back() == ' ')) {
            value.pop_back();
        }
        reply.headers[name] = value;
    }
    reply.body = data.substr(headEnd + 4);
    return reply;
}

/// An SSE response read incrementally from a raw socket.
class SseReader {
public:
    SseReader(std::uint16_t port, const std::string& method,
              const std::vector<std::pair<std::string, std::string>>& headers,
              const std::string& body = "")
        : socket_(Poco::Net::SocketAddress("127.0.0.1", port)) {
        socket_.setReceiveTimeout(Poco::Timespan(20, 0));
        std::string request = method + " /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n";
        for (const auto& [name, value] : headers) {
            request += name + ": " + value + "\r\n";
        }
        request += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
        socket_.sendBytes(request.data(), static_cast<int>(request.size()));
        while (buffer_.find("\r\n\r\n") == std::string::npos && fill()) {
        }
        const auto end = buffer_.find("\r\n\r\n");
        head_ = buffer_.substr(0, end == std::string::npos ? buffer_.size() : end);
        buffer_.erase(0, end == std::string::npos ? buffer_.size() : end + 4);
    }

    const std::string& head() const { return head_; }

    struct Event {
        std::string id;
        std::string data;
    };
    /// The next event (comments skipped); nullopt when the server closed the stream.
    std::optional<Event> next() {
        while (true) {
            const auto end = buffer_.find("\n\n");
            if (end != std::string::npos) {
                const std::string block = buffer_.substr(0, end);
                buffer_.erase(0, end + 2);
                Event e;
                std::istringstream lines(block);
                std::string line;
                bool any = false;
                while (std::getline(lines, line)) {
                    if (line.rfind("id: ", 0) == 0) {
                        e.id = line.substr(4);
                        any = true;
                    } else if (line.rfind("data:", 0) == 0) {
                        e.data += line.size() > 5 ? line.substr(line[5] == ' ' ? 6 : 5) : "";
                        any = true;
                    }
                }
                if (any) {
                    return e;
                }
                continue;
            }
            if (!fill()) {
                return std::nullopt;
            }
        }
    }

    void close() { socket_.close(); }
    /// Reads events (at most 50, each waited for as setReceiveTimeout() says) until one whose
    /// data holds `text`; false when the stream ends or none does.
    bool waitFor(std::string_view text) {
        for (int i = 0; i < 50; ++i) {
            const auto event = next();
            if (!event) {
                return false;
            }
            if (event->data.find(text) != std::string::npos) {
                return true;
            }
        }
        return false;
    }

    /// How long next() waits for bytes before it gives up (returns nullopt); 20 s at first.
    void setReceiveTimeout(std::chrono::milliseconds timeout) {
        socket_.setReceiveTimeout(Poco::Timespan(static_cast<long>(timeout.count() / 1000),
                                                 static_cast<long>(timeout.count() % 1000) * 1000));
    }

private:
    bool fill() {
        char chunk[4096];
        int n = 0;
        try {
            n = socket_.receiveBytes(chunk, sizeof chunk);
        } catch (const Poco::Exception&) {
            return false;
        }
        if (n <= 0) {
            return false;
        }
        buffer_.append(chunk, static_cast<std::size_t>(n));
        return true;
    }

    Poco::Net::StreamSocket socket_;
    std::string buffer_;
    std::string head_;
};

/// An MCP session over raw exchanges, as the integration suites use it: initialize and
/// notifications/initialized once, then posts that carry the session id, and tools/call.
class McpClient {
public:
    /// `bearer`: an agent's API key, sent as `Authorization: Bearer KEY` (empty: none).
    /// `path`: the endpoint (a workspace's is `/w/{workspace}/mcp`).
    explicit McpClient(std::uint16_t port, std::string bearer = {}, std::string path = "/mcp")
        : port_(port), bearer_(std::move(bearer)), path_(std::move(path)) {}

    /// initialize + notifications/initialized. False (after ADD_FAILURE) when either fails.
    bool open() {
        const Reply init =
            post(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":)"
                 R"("2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
        if (init.status != 200) {
            ADD_FAILURE() << "initialize: " << init.status << " " << init.body;
            return false;
        }
        session_ = init.header("mcp-session-id");
        const Reply initialized = post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
        if (initialized.status != 202) {
            ADD_FAILURE() << "notifications/initialized: " << initialized.status;
            return false;
        }
        return true;
    }

    /// A POST to the endpoint with the session's headers (and `extra`).
    Reply post(const std::string& body,
               const std::vector<std::pair<std::string, std::string>>& extra = {}) const {
        std::vector<std::pair<std::string, std::string>> headers{
            {"Content-Type", "application/json"}, {"Accept", kAccept}};
        headers.insert(headers.end(), extra.begin(), extra.end());
        if (!session_.empty()) {
            headers.emplace_back("Mcp-Session-Id", session_);
            headers.emplace_back("MCP-Protocol-Version", "2025-11-25");
        }
        if (!bearer_.empty()) {
            headers.emplace_back("Authorization", "Bearer " + bearer_);
        }
        return exchange(port_, "POST", path_, headers, body);
    }

    /// tools/call's `result` object (a copy in its own document; ADD_FAILURE and {} when the
    /// answer has none). The whole HTTP response body goes to `body` when given.
    /// `meta_json`: the params' `_meta` object, when not empty.
    /// Every tool name tools/list offers, page by page (at most 100 pages); empty when an answer
    /// has no result (the caller's assertion says what it expected).
    std::vector<std::string> toolNames() const {
        std::vector<std::string> names;
        std::string cursor;
        for (int page = 0; page < 100; ++page) {
            const Reply reply =
                post(R"({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{)" +
                     (cursor.empty() ? std::string() : R"("cursor":")" + cursor + "\"") + "}}");
            rapidjson::Document doc;
            doc.Parse(reply.body.c_str());
            if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("result") ||
                !doc["result"].HasMember("tools")) {
                return names;
            }
            for (const auto& tool : doc["result"]["tools"].GetArray()) {
                names.emplace_back(tool["name"].GetString());
            }
            if (!doc["result"].HasMember("nextCursor") || !doc["result"]["nextCursor"].IsString()) {
                break;
            }
            cursor = doc["result"]["nextCursor"].GetString();
        }
        return names;
    }

    /// Whether tools/list offers `name`.
    bool lists(const std::string& name) const {
        const std::vector<std::string> names = toolNames();
        return std::find(names.begin(), names.end(), name) != names.end();
    }

    rapidjson::Document callTool(const std::string& tool, const std::string& arguments,
                                 std::string* body = nullptr,
                                 const std::string& meta_json = "") const {
        const Reply reply =
            post(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":")" + tool +
                 R"(","arguments":)" + arguments +
                 (meta_json.empty() ? "" : R"(,"_meta":)" + meta_json) + "}}");
        EXPECT_EQ(reply.status, 200) << reply.body;
        if (body != nullptr) {
            *body = reply.body;
        }
        rapidjson::Document doc;
        doc.Parse(reply.body.c_str());
        rapidjson::Document result;
        if (!doc.HasParseError() && doc.IsObject() && doc.HasMember("result")) {
            result.CopyFrom(doc["result"], result.GetAllocator());
        } else {
            ADD_FAILURE() << tool << ": no result: " << reply.body;
            result.SetObject();
        }
        return result;
    }

    const std::string& session() const { return session_; }

private:
    std::uint16_t port_;
    std::string bearer_;
    std::string path_;
    std::string session_;
};

}  // namespace crank::testing
